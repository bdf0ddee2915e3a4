import {
  to       = windows_runtime_class.ltsc2022
  provider = windows.admin
  id       = "windows-2022" # the RuntimeClass name
}
