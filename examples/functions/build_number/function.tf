locals {
  # "10.0.20348"
  ltsc2022 = provider::windows::build_number("2022")
}
