variable "name" {
  description = "Name prefix applied to every resource created by this module."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "The name must start with a lowercase letter and contain only lowercase letters, digits and hyphens (2 to 31 characters)."
  }
}

variable "cidr_block" {
  description = "IPv4 CIDR block of the VPC."
  type        = string
  default     = "10.0.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0))
    error_message = "The cidr_block must be a valid IPv4 CIDR block, e.g. \"10.0.0.0/16\"."
  }
}

variable "enable_dns_hostnames" {
  description = "Give instances launched in the VPC public DNS hostnames."
  type        = bool
  default     = true
}

variable "azs" {
  description = "Availability zones to spread subnets across. Empty means every available zone of the region."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "subnets" {
  description = <<-EOT
    Subnets to create, keyed by a short name.

    `tier` is either "public" or "private" and decides the route table;
    attributes left out take the defaults written in the type.
  EOT
  type = map(object({
    cidr = string           # IPv4 CIDR, must sit inside var.cidr_block
    az   = optional(string) // null: spread over var.azs in key order
    tier = optional(string, "private")
    /* Tags merged over var.tags for this subnet only;
       they win over the module's own tags. */
    tags = optional(map(string), {})
  }))
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for s in values(var.subnets) : contains(["public", "private"], s.tier)])
    error_message = "Each subnet tier must be \"public\" or \"private\"."
  }
}

variable "enable_nat_gateway" {
  description = "Create one NAT gateway in the first public subnet so private subnets reach the internet."
  type        = bool
  default     = false
}

variable "default_security_group_ingress" {
  description = "Ingress rules of the VPC's default security group. The default allows traffic between members only."
  type = list(object({
    protocol    = string
    from_port   = number
    to_port     = number
    cidr_blocks = optional(list(string), [])
    self        = optional(bool, false)
  }))
  default = [
    {
      protocol  = "-1"
      from_port = 0
      to_port   = 0
      self      = true
    },
  ]
}

variable "tags" {
  description = "Extra tags added to every resource."
  type        = map(string)
  default     = {}
}
