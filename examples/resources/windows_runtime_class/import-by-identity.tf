import {
  to = windows_runtime_class.ltsc2022
  identity = {
    name = "windows-2022"
  }
}
