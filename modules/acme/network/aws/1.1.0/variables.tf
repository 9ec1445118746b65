variable "name" {
  description = "Name prefix applied to every resource created by this module."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "The name must start with a lowercase letter and contain only lowercase letters, digits and hyphens (2 to 31 characters)."
  }
}

variable "cidr_block" {
  description = "IPv4 CIDR block of the VPC."
  type        = string
  default     = "10.0.0.0/16"
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
}

variable "private_subnets" {
  description = <<EOF
Map of private subnets to create, keyed by a short name.
Each value gives the CIDR block of the subnet and the index of its
availability zone in var.azs.
EOF
  type = map(object({
    cidr   = string
    az_idx = number
  }))
  default = {}
}

variable "public_subnets" {
  description = "Map of public subnets to create, in the same form as var.private_subnets."
  type = map(object({
    cidr   = string
    az_idx = number
  }))
  default = {}
}

variable "enable_nat_gateway" {
  description = "Create one NAT gateway in the first public subnet so private subnets reach the internet."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Extra tags added to every resource."
  type        = map(string)
  default     = {}
}
