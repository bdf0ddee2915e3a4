# How far the nodes of a pool run behind this month's golden image.
data "windows_update_status" "ltsc2022" {
  image       = var.image_template_id # windows_golden_image.<name>.template_id
  name_prefix = "win-"
}

# Told at every plan while a node has not rolled onto the image (a check
# warns; it never blocks the plan that fixes it).
check "windows_nodes_patched" {
  assert {
    condition = length(data.windows_update_status.ltsc2022.behind_nodes) == 0
    error_message = join("\n", [
      for n in data.windows_update_status.ltsc2022.nodes :
      "${n.name} runs ${n.windows_build_full}, missing ${join(", ", n.missing_updates)}" if n.status == "behind"
    ])
  }
}

output "windows_patch_level" {
  value = {
    for n in data.windows_update_status.ltsc2022.nodes : n.name => {
      status = n.status
      build  = n.windows_build_full
    }
  }
}
