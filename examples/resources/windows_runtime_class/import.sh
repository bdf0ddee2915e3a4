# A RuntimeClass is imported by its name.
terraform import windows_runtime_class.ltsc2022 windows-2022
