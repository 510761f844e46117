# The embedded demo fabric (inventory/demo, one plane) recorded in NetBox: the HCL equivalent of the "demo" stack
# that cdktf/main.py synthesizes.

terraform {
  required_providers {
    hwaac = {
      source  = "aiinfra/hwaac"
      version = "~> 0.1"
    }
  }
}

# No url and no token here: the provider reads NETBOX_URL and NETBOX_TOKEN from the environment of terraform, so
# no credential ever lands in a file.
provider "hwaac" {}

resource "hwaac_fabric_plane" "demo" {
  # Relative paths are read from terraform's working directory (path.module is "." for this root module).
  intent_file = "${path.module}/../../../inventory/demo/fabric.yml"
  plane       = 0 # planes count from 0, as device names do (leaf-p0-...)

  # Growing the fabric only adds objects; set these to accept a change that renumbers or removes what exists.
  allow_renumber = false
  allow_remove   = false
}

output "counts" {
  description = "NetBox objects recorded for the plane, by kind (devices, switches, gpu_nodes, cables, ...)"
  value       = hwaac_fabric_plane.demo.counts
}

output "devices" {
  description = "Switch name -> loopback and ASN"
  value       = hwaac_fabric_plane.demo.devices
}

output "drift" {
  description = "Differences between NetBox and the intent found on the last refresh (empty when in step)"
  value       = hwaac_fabric_plane.demo.drift
}

output "intent_sha256" {
  value = hwaac_fabric_plane.demo.intent_sha256
}
