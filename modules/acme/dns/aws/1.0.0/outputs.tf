output "zone_id" {
  description = "ID of the hosted zone."
  value       = local.zone_id
}

output "name_servers" {
  description = "Name servers of the zone; empty when the zone was looked up rather than created."
  value       = try(aws_route53_zone.this[0].name_servers, [])
}

output "fqdns" {
  description = "Fully qualified name of every record, keyed like var.records."
  value       = local.fqdns
}

output "health_check_ids" {
  description = "Health check IDs keyed like var.health_checks."
  value       = { for k, h in aws_route53_health_check.this : k => h.id }
}
