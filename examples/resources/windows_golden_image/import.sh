# A golden image is imported by the inventory path (or managed object id) of
# its template.
terraform import windows_golden_image.ltsc2022 /dc1/vm/templates/win2022-k8s-v1.36.3
terraform import windows_golden_image.ltsc2019 vm-1042
