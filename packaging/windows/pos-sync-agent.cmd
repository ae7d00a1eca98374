@echo off
rem The `pos-sync-agent` command of the desktop app (POS Sync Agent): runs the same CLI as the npm
rem package, through the app's own runtime in Node mode (ELECTRON_RUN_AS_NODE), as editors ship their
rem command. Installed in the install folder's resources\bin, which the installer adds to the machine PATH.
setlocal
set ELECTRON_RUN_AS_NODE=1
"%~dp0..\..\POS Sync Agent.exe" "%~dp0..\app.asar\bin\pos-sync-agent.cjs" %*
exit /b %ERRORLEVEL%
