; Included by electron-builder's NSIS installer (electron-builder.yml, nsis.include).
; - Puts the `pos-sync-agent` command (resources\bin\pos-sync-agent.cmd) on the machine PATH.
; - Offers the agent as a Windows service: resources\service\pos-sync-agent-service.cmd registers it
;   with NSSM (resources\service\nssm.exe) under LocalService on the machine-wide configuration
;   %ProgramData%\pos-sync-agent\config.json. Every service command is in that one script, which the
;   Windows lane runs under Wine (test/windows/service.test.ts). `/SERVICE` on the command line says
;   yes without asking (silent installs).
; - An update stops the service before any file is checked or replaced, keeps its registration
;   through the old version's uninstaller, brings it up to date from the new files and starts it again
;   (the agent migrates its data when it starts). Uninstalling removes the service and the PATH entry,
;   never the data.
; The installer is per-machine and elevated, so it writes the machine environment (HKLM).

!include "WinMessages.nsh"
!include "LogicLib.nsh"
!include "FileFunc.nsh"

!define POS_SYNC_SERVICE "pos-sync-agent"
!define POS_SYNC_SERVICE_SCRIPT '"$SYSDIR\cmd.exe" /c ""$INSTDIR\resources\service\pos-sync-agent-service.cmd"'

!define POS_SYNC_ENV_KEY "SYSTEM\CurrentControlSet\Control\Session Manager\Environment"
; A PATH longer than this is left alone: NSIS would cut it when reading it back.
!define /math POS_SYNC_PATH_ROOM ${NSIS_MAX_STRLEN} - 300

; $R0 = haystack, $R1 = needle; leaves the position of needle in haystack, or -1, on the stack.
!macro POS_SYNC_FIND_FUNCTION PREFIX
Function ${PREFIX}PosSyncFind
  Exch $R1
  Exch
  Exch $R0
  Push $R2
  Push $R3
  Push $R4
  StrLen $R3 $R1
  StrCpy $R2 0
  loop:
    StrCpy $R4 $R0 $R3 $R2
    StrCmp $R4 $R1 found
    StrCmp $R4 "" notfound
    IntOp $R2 $R2 + 1
    Goto loop
  found:
    StrCpy $R0 $R2
    Goto done
  notfound:
    StrCpy $R0 -1
  done:
  Pop $R4
  Pop $R3
  Pop $R2
  Pop $R1
  Exch $R0
FunctionEnd
!macroend

!ifdef BUILD_UNINSTALLER
  !insertmacro POS_SYNC_FIND_FUNCTION "un."
!else
  !insertmacro POS_SYNC_FIND_FUNCTION ""
!endif

; Before electron-builder checks for running copies of the app (and before an update replaces files):
; the service runs the app's runtime too, so it is stopped first (net stop waits until it has stopped).
!macro customCheckAppRunning
  nsExec::ExecToLog '"$SYSDIR\net.exe" stop ${POS_SYNC_SERVICE}'
  Pop $0
  !insertmacro IS_POWERSHELL_AVAILABLE
  !insertmacro _CHECK_APP_RUNNING
!macroend

!macro customInstall
  ; The service: already registered (an update), bring it up to date from the new files and start it;
  ; else offer it.
  nsExec::Exec '"$SYSDIR\sc.exe" query ${POS_SYNC_SERVICE}'
  Pop $0
  ${If} $0 == 0
    nsExec::ExecToLog '${POS_SYNC_SERVICE_SCRIPT} install"'
    Pop $0
    ${If} $0 != 0
      DetailPrint "The service could not be brought up to date (exit code $0): see docs/operations.md, Service on Windows."
    ${EndIf}
    nsExec::ExecToLog '"$SYSDIR\net.exe" start ${POS_SYNC_SERVICE}'
    Pop $0
  ${Else}
    ${GetParameters} $1
    ClearErrors
    ${GetOptions} $1 "/SERVICE" $2
    ${If} ${Errors}
      ${IfNot} ${Silent}
        MessageBox MB_YESNO|MB_ICONQUESTION "Run the agent as a Windows service?$\r$\n$\r$\nIt then starts with the PC and receives updates with nobody logged in; this app and the pos-sync-agent command connect to it. Choose No to run it only while this app is open." /SD IDNO IDNO pos_sync_no_service
      ${Else}
        Goto pos_sync_no_service
      ${EndIf}
    ${EndIf}
    ; The machine-wide folder (configuration, data, service logs) and the registration.
    nsExec::ExecToLog '${POS_SYNC_SERVICE_SCRIPT} install"'
    Pop $0
    ${If} $0 == 3
      ; A configuration was already in %ProgramData%\pos-sync-agent: not started on it unread.
      DetailPrint "The service is registered but not started: an existing configuration was kept."
      MessageBox MB_OK|MB_ICONINFORMATION "The service is registered but not started: %ProgramData%\pos-sync-agent\config.json was already there and was kept.$\r$\n$\r$\nRead it first (another account on this PC could have written it), then start the service: net start ${POS_SYNC_SERVICE}" /SD IDOK
    ${ElseIf} $0 != 0
      DetailPrint "The service could not be registered (exit code $0): see docs/operations.md, Service on Windows."
    ${Else}
      nsExec::ExecToLog '"$SYSDIR\net.exe" start ${POS_SYNC_SERVICE}'
      Pop $0
    ${EndIf}
    pos_sync_no_service:
  ${EndIf}

  ; The command: <install folder>\resources\bin on the machine PATH, once.
  ReadRegStr $0 HKLM "${POS_SYNC_ENV_KEY}" "Path"
  StrLen $1 $0
  ${If} $1 > ${POS_SYNC_PATH_ROOM}
    DetailPrint "PATH is too long to change safely: add $INSTDIR\resources\bin to it by hand for the pos-sync-agent command."
  ${Else}
    Push ";$0;"
    Push ";$INSTDIR\resources\bin;"
    Call PosSyncFind
    Pop $2
    ${If} $2 == -1
      ${If} $0 == ""
        WriteRegExpandStr HKLM "${POS_SYNC_ENV_KEY}" "Path" "$INSTDIR\resources\bin"
      ${Else}
        WriteRegExpandStr HKLM "${POS_SYNC_ENV_KEY}" "Path" "$0;$INSTDIR\resources\bin"
      ${EndIf}
      SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
    ${EndIf}
  ${EndIf}
!macroend

!macro customUnInstall
  ; An update runs the old uninstaller first: the service stays registered (stopped by
  ; customCheckAppRunning) and the command stays on PATH then.
  ${IfNot} ${isUpdated}
    ; Stops the service (the agent's clean stop) and removes it; nothing when it is not registered.
    nsExec::ExecToLog '${POS_SYNC_SERVICE_SCRIPT} uninstall"'
    Pop $0
    ; %ProgramData%\pos-sync-agent (configuration and data) is kept.
  ${EndIf}
  ${IfNot} ${isUpdated}
    ReadRegStr $0 HKLM "${POS_SYNC_ENV_KEY}" "Path"
    StrLen $1 $0
    ${If} $1 <= ${POS_SYNC_PATH_ROOM}
      Push ";$0;"
      Push ";$INSTDIR\resources\bin;"
      Call un.PosSyncFind
      Pop $2
      ${If} $2 != -1
        ; Cut ";<dir>" out of ";PATH;", then drop the added leading and trailing ";".
        StrCpy $3 ";$0;" $2
        StrLen $4 ";$INSTDIR\resources\bin"
        IntOp $4 $4 + $2
        StrCpy $5 ";$0;" "" $4
        StrCpy $6 "$3$5"
        StrCpy $6 $6 "" 1
        StrCpy $6 $6 -1
        WriteRegExpandStr HKLM "${POS_SYNC_ENV_KEY}" "Path" "$6"
        SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
      ${EndIf}
    ${EndIf}
  ${EndIf}
!macroend
