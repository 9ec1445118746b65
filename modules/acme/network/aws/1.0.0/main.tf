locals {
  azs = length(var.azs) > 0 ? var.azs : data.aws_availability_zones.available.names

  common_tags = merge(var.tags, {
    "Module" = "acme/network/aws"
  })
}

data "aws_availability_zones" "available" {
  state = "available"
}

resource "aws_vpc" "this" {
  cidr_block         = var.cidr_block
  enable_dns_support = true

  tags = merge(local.common_tags, { Name = var.name })
}

module "subnets" {
  source = "./modules/subnets"

  vpc_id  = aws_vpc.this.id
  name    = var.name
  subnets = { for k, s in var.private_subnets : k => { cidr = s.cidr, az = local.azs[s.az_idx] } }
  tags    = local.common_tags
}
