variable "zone_name" {
  description = "Fully qualified name of the hosted zone, without the trailing dot, e.g. `example.com`."
  type        = string
  nullable    = false
}

variable "create_zone" {
  description = "Create the hosted zone. When false, an existing public zone with that name is looked up."
  type        = bool
  default     = false
}

variable "default_ttl" {
  description = "TTL in seconds for records that do not set their own."
  type        = number
  default     = 300
}

variable "records" {
  description = <<-EOT
    DNS records keyed by a unique label. `name` is relative to the zone
    (empty for the apex). Set either `values` or `alias`, not both.
  EOT
  type = map(object({
    name   = string
    type   = string
    ttl    = optional(number) # falls back to var.default_ttl
    values = optional(list(string), [])
    alias = optional(object({
      name                   = string
      zone_id                = string
      evaluate_target_health = optional(bool, true)
    }))
  }))
  default = {}

  validation {
    condition = alltrue([
      for r in values(var.records) : (length(r.values) > 0) != (r.alias != null)
    ])
    error_message = "Each record must set exactly one of values or alias."
  }
}

variable "health_checks" {
  description = "HTTPS health checks keyed by label."
  type = map(object({
    fqdn              = string
    port              = optional(number, 443)
    resource_path     = optional(string, "/healthz")
    request_interval  = optional(number, 30)
    failure_threshold = optional(number, 3)
  }))
  default = {}
}

variable "latency_alarm_threshold" {
  description = "Average health-check latency, in milliseconds, above which an alarm is raised."
  type        = number
  default     = 1e3
}

variable "tags" {
  description = "Tags for the zone and health checks."
  type        = map(string)
  default     = {}
}
