# Pools kept in NetBox: two prefixes with IPAM roles, a fabric plane whose intent names its pools by those roles,
# and the two data sources (read a pool back from NetBox; plan the fabric without recording it).

terraform {
  required_providers {
    hwaac = {
      source  = "aiinfra/hwaac"
      version = "~> 0.1"
    }
  }
}

# url and token come from NETBOX_URL and NETBOX_TOKEN in the environment; never write a token here.
provider "hwaac" {}

resource "hwaac_ipam_pool" "fabric_p2p" {
  prefix      = "10.1.0.0/20"
  role        = "fabric-p2p" # NetBox IPAM role slug, as named in fabric.yml
  description = "leaf-spine /31 links"
}

resource "hwaac_ipam_pool" "gpu_host_links" {
  prefix      = "172.16.0.0/16"
  role        = "gpu-host-links"
  description = "GPU host links"
}

locals {
  # role -> prefix. Referencing the pool resources (not literals) makes terraform create the pools first.
  pools = {
    (hwaac_ipam_pool.fabric_p2p.role)     = hwaac_ipam_pool.fabric_p2p.prefix
    (hwaac_ipam_pool.gpu_host_links.role) = hwaac_ipam_pool.gpu_host_links.prefix
  }
}

resource "hwaac_fabric_plane" "netbox_pools" {
  intent_file = "${path.module}/fabric.yml"
  plane       = 0
  pools       = local.pools
}

# The leaf-spine pool as NetBox holds it (one prefix with that role; reading fails on none or several).
data "hwaac_netbox_prefix" "fabric_p2p" {
  role = hwaac_ipam_pool.fabric_p2p.role
}

# The same intent planned without writing to NetBox: sizes and addressing to review before an apply.
data "hwaac_fabric_plan" "netbox_pools" {
  intent_file = "${path.module}/fabric.yml"
  pools       = local.pools
}

output "p2p_prefix_in_netbox" {
  value = data.hwaac_netbox_prefix.fabric_p2p.prefix
}

output "planned_counts" {
  value = data.hwaac_fabric_plan.netbox_pools.counts
}

output "recorded_counts" {
  value = hwaac_fabric_plane.netbox_pools.counts
}

output "pools_used" {
  description = "Intent field path -> CIDR the plane was built from"
  value       = hwaac_fabric_plane.netbox_pools.pools_used
}

output "devices" {
  value = hwaac_fabric_plane.netbox_pools.devices
}
