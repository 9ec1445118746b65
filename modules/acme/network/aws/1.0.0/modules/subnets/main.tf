variable "vpc_id" {
  description = "VPC to create the subnets in."
  type        = string
}

variable "name" {
  description = "Name prefix for the subnets."
  type        = string
}

variable "subnets" {
  description = "Subnets keyed by short name: CIDR block and availability zone."
  type = map(object({
    cidr = string
    az   = string
  }))
}

variable "tags" {
  description = "Tags for every subnet."
  type        = map(string)
  default     = {}
}

resource "aws_subnet" "this" {
  for_each = var.subnets

  vpc_id            = var.vpc_id
  cidr_block        = each.value.cidr
  availability_zone = each.value.az

  tags = merge(var.tags, { Name = "${var.name}-${each.key}" })
}

output "ids" {
  description = "Subnet IDs keyed by short name."
  value       = { for k, s in aws_subnet.this : k => s.id }
}
