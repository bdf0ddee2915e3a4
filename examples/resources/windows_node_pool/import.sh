# A pool is imported by its name prefix (every Windows node named web-...),
# or by a comma-separated list of its members' names. The first apply adopts
# the members as they are: none is replaced.
terraform import windows_node_pool.web web
terraform import windows_node_pool.web web-b7x2k,web-q9z4m,web-t5c8n
