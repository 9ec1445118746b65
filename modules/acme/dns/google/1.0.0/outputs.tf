output "managed_zone" {
  description = "Name of the managed zone resource."
  value       = local.managed_zone
}

output "name_servers" {
  description = "Name servers of the zone."
  value       = var.create_zone ? google_dns_managed_zone.this[0].name_servers : data.google_dns_managed_zone.existing[0].name_servers
}

output "fqdns" {
  description = "Fully qualified name, with trailing dot, of every record keyed like var.records."
  value       = local.fqdns
}
