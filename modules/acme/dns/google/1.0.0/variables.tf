variable "project" {
  description = "Google Cloud project that owns the managed zone."
  type        = string
}

variable "zone_name" {
  description = "Fully qualified DNS name of the zone, without the trailing dot, e.g. `example.com`."
  type        = string
  nullable    = false
}

variable "create_zone" {
  description = "Create the managed zone. When false, an existing zone with that DNS name is looked up."
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
    (empty for the apex). `canary` values, when set, receive a share of
    traffic given by var.canary_weight through weighted round robin.
  EOT
  type = map(object({
    name   = string
    type   = string
    ttl    = optional(number)
    values = list(string)
    canary = optional(list(string))
  }))
  default = {}
}

variable "canary_weight" {
  description = "Weight of canary values relative to a weight of 100 for the main values."
  type        = number
  default     = 1.5

  validation {
    condition     = var.canary_weight >= 0 && var.canary_weight <= 1e3
    error_message = "canary_weight must be between 0 and 1000."
  }
}

variable "labels" {
  description = "Labels for a created managed zone."
  type        = map(string)
  default     = {}
}
