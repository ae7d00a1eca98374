@echo off
rem The Windows service of POS Sync Agent, through NSSM (nssm.exe beside this file, in the install
rem folder's resources\service). The installer (packaging/windows/installer.nsh) runs this file, and
rem so does the Windows lane (test/windows/service.test.ts): the test runs the installer's own commands.
rem   pos-sync-agent-service.cmd install     register the service, or bring a registration up to date
rem   pos-sync-agent-service.cmd uninstall   stop and remove the service; the data is kept
rem   pos-sync-agent-service.cmd prune-logs [FOLDER]  keep the newest five rotated service logs (NSSM runs it)
rem Run it elevated. It starts nothing: the installer then runs net start pos-sync-agent.
rem Exit code 0 when every step worked; 3 when install registered the service but kept a configuration
rem it did not write (start it once it has been read); otherwise the failed step is named and the code is 1.
rem (Each step is checked on its own line: Wine's cmd.exe, where the test runs, gets the or-else operator wrong.)
setlocal
set "SERVICE=pos-sync-agent"
for %%I in ("%~dp0.") do set "HERE=%%~fI"
for %%I in ("%~dp0..\..") do set "INSTALL=%%~fI"
set "NSSM=%HERE%\nssm.exe"
set "SC=%SystemRoot%\System32\sc.exe"
set "SITE=%ProgramData%\pos-sync-agent"
rem NSSM knows its services by their program path, quoted only when it holds a space.
set "IMAGE=%NSSM%"
if not "%NSSM%"=="%NSSM: =%" set "IMAGE=\"%NSSM%\""
if /i "%~1"=="install" goto install
if /i "%~1"=="uninstall" goto uninstall
if /i "%~1"=="prune-logs" goto prune-logs
echo Usage: %~nx0 install ^| uninstall ^| prune-logs
exit /b 2

:install
rem The machine-wide folder: configuration (readable by users, so the desktop app and the command find
rem the service's site), data and the service's logs. SYSTEM and Administrators: full; LocalService
rem (the service's account): modify; Users: may list the folder and read config.json, nothing else.
rem A configuration already there on a PC without the service was not written by this script: any
rem account may create the folder under %ProgramData%. It is kept, and the script ends with exit code
rem 3 so that the installer does not start the service on it before a person has read it.
set "KEPT="
"%SC%" query %SERVICE% >nul 2>&1
if errorlevel 1 if exist "%SITE%\config.json" set "KEPT=1"
set "STEP=the folder %SITE%"
if not exist "%SITE%\data\" mkdir "%SITE%\data"
if not exist "%SITE%\service-logs\" mkdir "%SITE%\service-logs"
if not exist "%SITE%\config.json" echo {}> "%SITE%\config.json"
if not exist "%SITE%\data\" goto failed
if not exist "%SITE%\service-logs\" goto failed
if not exist "%SITE%\config.json" goto failed
set "STEP=icacls"
rem A folder that was there before may have been made by any account (Users may create folders under
rem %ProgramData%): Administrators take it over with everything in it, the folder is made private,
rem and only then is every entry written on what it holds dropped, so that it all inherits the
rem private folder's (never the folder itself: reset, it would inherit %ProgramData%'s for a while).
"%SystemRoot%\System32\icacls.exe" "%SITE%" /setowner *S-1-5-32-544 /T /C /Q >nul
if errorlevel 1 goto failed
"%SystemRoot%\System32\icacls.exe" "%SITE%" /inheritance:r /grant:r "*S-1-5-18:(OI)(CI)F" "*S-1-5-32-544:(OI)(CI)F" "*S-1-5-19:(OI)(CI)M" "*S-1-5-32-545:(RX)" >nul
if errorlevel 1 goto failed
"%SystemRoot%\System32\icacls.exe" "%SITE%\*" /reset /T /C /Q >nul
if errorlevel 1 goto failed
"%SystemRoot%\System32\icacls.exe" "%SITE%\config.json" /grant "*S-1-5-32-545:R" >nul
if errorlevel 1 goto failed
rem The data folder: LocalService full control, which lets the agent make it private at start-up
rem (its icacls call needs the right to change permissions, which modify does not give).
"%SystemRoot%\System32\icacls.exe" "%SITE%\data" /grant "*S-1-5-19:(OI)(CI)F" >nul
if errorlevel 1 goto failed
set "STEP=sc query"
"%SC%" query %SERVICE% >nul 2>&1
if not errorlevel 1 goto configure
rem Created with the account, once: LocalService, low privileges, anonymous on the network. (sc.exe,
rem not nssm install: NSSM sets an account through an LSA call that Wine, where the test runs, lacks.)
rem NSSM takes a service as its own once Parameters\Application names a program.
set "STEP=sc create"
"%SC%" create %SERVICE% binPath= "%IMAGE%" start= auto obj= "NT AUTHORITY\LocalService" password= "" DisplayName= "POS Sync Agent"
if errorlevel 1 goto failed
set "STEP=reg add"
"%SystemRoot%\System32\reg.exe" add "HKLM\SYSTEM\CurrentControlSet\Services\%SERVICE%\Parameters" /v Application /t REG_EXPAND_SZ /d "%INSTALL%\POS Sync Agent.exe" /f >nul
if errorlevel 1 goto failed

:configure
set "STEP=nssm set"
rem The app's own runtime in Node mode runs the CLI's serve on the machine-wide configuration.
"%NSSM%" set %SERVICE% Application "%INSTALL%\POS Sync Agent.exe"
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppParameters "\"%INSTALL%\resources\app.asar\bin\pos-sync-agent.cjs\" serve --config \"%SITE%\config.json\""
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppDirectory "%SITE%"
if errorlevel 1 goto failed
rem ProgramData is pinned to the value the configuration's path was made with: the agent knows it runs
rem on the machine-wide configuration (data in %SITE%\data) by comparing the two.
"%NSSM%" set %SERVICE% AppEnvironmentExtra ELECTRON_RUN_AS_NODE=1 NODE_ENV=production "ProgramData=%ProgramData%"
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% DisplayName "POS Sync Agent"
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% Description "Keeps the till in step with head office menu cycle updates. The desktop app and the pos-sync-agent command are its clients."
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% Start SERVICE_AUTO_START
if errorlevel 1 goto failed
rem Stop: Ctrl+C first, and up to two minutes for the apply under way to finish (serve then prints
rem Stopped.); only then are the window and thread messages and, last, TerminateProcess tried.
"%NSSM%" set %SERVICE% AppStopMethodSkip 0
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppStopMethodConsole 120000
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppKillProcessTree 1
if errorlevel 1 goto failed
rem The agent ended any other way (a crash, Task Manager): started again after 10 s.
"%NSSM%" set %SERVICE% AppExit Default Restart
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppRestartDelay 10000
if errorlevel 1 goto failed
rem stdout and stderr in one file, a new file past 1 MiB (the old one renamed with its time).
"%NSSM%" set %SERVICE% AppStdout "%SITE%\service-logs\service.log"
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppStderr "%SITE%\service-logs\service.log"
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppRotateFiles 1
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppRotateOnline 1
if errorlevel 1 goto failed
"%NSSM%" set %SERVICE% AppRotateBytes 1048576
if errorlevel 1 goto failed
rem NSSM deletes no old file: before every start of the agent (a restart too), this script's
rem prune-logs keeps the newest five. (NSSM drops quotes around a whole value: cmd.exe's path, which
rem has no space, is left unquoted.)
"%NSSM%" set %SERVICE% AppEvents Start/Pre "%SystemRoot%\System32\cmd.exe /c \"\"%HERE%\pos-sync-agent-service.cmd\" prune-logs \"%SITE%\service-logs\"\""
if errorlevel 1 goto failed
rem NSSM itself ended: the Service Control Manager starts it again (10 s, 30 s, 60 s; count reset after a day).
set "STEP=sc failure"
"%SC%" failure %SERVICE% reset= 86400 actions= restart/10000/restart/30000/restart/60000
if errorlevel 1 goto failed
if defined KEPT (
  echo pos-sync-agent service: registered, not to be started yet: %SITE%\config.json was already there and was kept. Read it, then start the service: net start %SERVICE% 1>&2
  exit /b 3
)
exit /b 0

:uninstall
"%SC%" query %SERVICE% >nul 2>&1
if errorlevel 1 exit /b 0
rem net stop waits until the service has stopped (the agent's clean stop above).
"%SystemRoot%\System32\net.exe" stop %SERVICE% >nul 2>&1
set "STEP=nssm remove"
"%NSSM%" remove %SERVICE% confirm
if errorlevel 1 goto failed
exit /b 0

:prune-logs
set "LOGS=%SITE%\service-logs"
if not "%~2"=="" set "LOGS=%~2"
for /f "skip=5 delims=" %%F in ('dir /b /a-d /o-d "%LOGS%\service-*.log" 2^>nul') do del "%LOGS%\%%F"
exit /b 0

:failed
echo pos-sync-agent service: %STEP% failed (exit code %ERRORLEVEL%); see docs/operations.md, Service on Windows. 1>&2
exit /b 1
