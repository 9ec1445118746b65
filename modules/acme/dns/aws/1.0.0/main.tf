data "aws_route53_zone" "existing" {
  count = var.create_zone ? 0 : 1

  name         = var.zone_name
  private_zone = false
}

resource "aws_route53_zone" "this" {
  count = var.create_zone ? 1 : 0

  name    = var.zone_name
  comment = "Managed by acme/dns/aws%{ if length(var.tags) > 0 } (tags: ${join(", ", sort(keys(var.tags)))})%{ endif }"
  tags    = var.tags
}

locals {
  zone_id = var.create_zone ? aws_route53_zone.this[0].zone_id : data.aws_route53_zone.existing[0].zone_id

  fqdns = {
    for k, r in var.records : k => (r.name == "" ? var.zone_name : "${r.name}.${var.zone_name}")
  }
}

resource "aws_route53_record" "this" {
  for_each = var.records

  zone_id = local.zone_id
  name    = local.fqdns[each.key]
  type    = each.value.type
  ttl     = each.value.alias == null ? coalesce(each.value.ttl, var.default_ttl) : null
  records = each.value.alias == null ? each.value.values : null

  dynamic "alias" {
    for_each = each.value.alias[*]
    content {
      name                   = alias.value.name
      zone_id                = alias.value.zone_id
      evaluate_target_health = alias.value.evaluate_target_health
    }
  }
}

resource "aws_route53_health_check" "this" {
  for_each = var.health_checks

  fqdn              = each.value.fqdn
  port              = each.value.port
  type              = "HTTPS"
  resource_path     = each.value.resource_path
  request_interval  = each.value.request_interval
  failure_threshold = each.value.failure_threshold
  measure_latency   = true

  tags = merge(var.tags, { Name = each.key })
}

resource "aws_cloudwatch_metric_alarm" "latency" {
  for_each = var.health_checks

  alarm_name          = "dns-${each.key}-latency"
  namespace           = "AWS/Route53"
  metric_name         = "TimeToFirstByte"
  statistic           = "Average"
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.latency_alarm_threshold
  period              = 60
  evaluation_periods  = 3

  dimensions = {
    HealthCheckId = aws_route53_health_check.this[each.key].id
  }
}
