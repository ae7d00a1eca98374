; Included by electron-builder's NSIS installer (electron-builder.yml, nsis.include).
; Puts the `pos-sync-agent` command (resources\bin\pos-sync-agent.cmd) on the machine PATH.
; The installer is per-machine and elevated, so it writes the machine environment (HKLM).

!include "WinMessages.nsh"
!include "LogicLib.nsh"

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

!macro customInstall
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
  ; An update runs the old uninstaller first: the command stays on PATH then.
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
