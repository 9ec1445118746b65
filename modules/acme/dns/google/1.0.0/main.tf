data "google_dns_managed_zone" "existing" {
  count = var.create_zone ? 0 : 1

  project = var.project
  name    = replace(var.zone_name, ".", "-")
}

resource "google_dns_managed_zone" "this" {
  count = var.create_zone ? 1 : 0

  project     = var.project
  name        = replace(var.zone_name, ".", "-")
  dns_name    = "${var.zone_name}."
  description = "Managed by acme/dns/google"
  labels      = var.labels
}

locals {
  managed_zone = var.create_zone ? google_dns_managed_zone.this[0].name : data.google_dns_managed_zone.existing[0].name

  fqdns = {
    for k, r in var.records : k => (r.name == "" ? "${var.zone_name}." : "${r.name}.${var.zone_name}.")
  }
}

resource "google_dns_record_set" "this" {
  for_each = var.records

  project      = var.project
  managed_zone = local.managed_zone
  name         = local.fqdns[each.key]
  type         = each.value.type
  ttl          = coalesce(each.value.ttl, var.default_ttl)
  rrdatas      = each.value.canary == null ? each.value.values : null

  dynamic "routing_policy" {
    for_each = each.value.canary == null ? [] : [each.value.canary]
    content {
      dynamic "wrr" {
        for_each = {
          main   = { weight = 100, rrdatas = each.value.values }
          canary = { weight = var.canary_weight, rrdatas = routing_policy.value }
        }
        content {
          weight  = wrr.value.weight
          rrdatas = wrr.value.rrdatas
        }
      }
    }
  }
}
