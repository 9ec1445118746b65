provider "google" {
  project = "acme-dns-example"
}

module "dns" {
  source = "../../"

  project     = "acme-dns-example"
  zone_name   = "example.com"
  create_zone = true

  records = {
    apex = { name = "", type = "A", values = ["192.0.2.10"] }
    api  = { name = "api", type = "A", values = ["192.0.2.20"], canary = ["192.0.2.21"] }
  }
}

output "name_servers" {
  value = module.dns.name_servers
}
