provider "aws" {
  region = "us-east-1"
}

module "dns" {
  source = "../../"

  zone_name   = "example.com"
  create_zone = true

  records = {
    apex = { name = "", type = "A", values = ["192.0.2.10"] }
    www  = { name = "www", type = "CNAME", ttl = 60, values = ["example.com"] }
  }

  health_checks = {
    www = { fqdn = "www.example.com" }
  }
}

output "name_servers" {
  value = module.dns.name_servers
}
