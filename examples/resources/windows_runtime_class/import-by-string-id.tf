import {
  to = windows_runtime_class.ltsc2022
  id = "windows-2022" # the RuntimeClass name
}
