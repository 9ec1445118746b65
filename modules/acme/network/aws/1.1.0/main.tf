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
  cidr_block           = var.cidr_block
  enable_dns_support   = true
  enable_dns_hostnames = var.enable_dns_hostnames

  tags = merge(local.common_tags, { Name = var.name })
}

resource "aws_internet_gateway" "this" {
  count = length(var.public_subnets) > 0 ? 1 : 0

  vpc_id = aws_vpc.this.id
  tags   = merge(local.common_tags, { Name = "${var.name}-igw" })
}

module "subnets" {
  source = "./modules/subnets"

  vpc_id  = aws_vpc.this.id
  name    = var.name
  subnets = { for k, s in var.private_subnets : k => { cidr = s.cidr, az = local.azs[s.az_idx] } }
  tags    = local.common_tags
}

module "public_subnets" {
  source = "./modules/subnets"

  vpc_id  = aws_vpc.this.id
  name    = "${var.name}-public"
  subnets = { for k, s in var.public_subnets : k => { cidr = s.cidr, az = local.azs[s.az_idx] } }
  tags    = merge(local.common_tags, { Tier = "public" })
}

module "nat" {
  source = "./modules/nat"
  count  = var.enable_nat_gateway ? 1 : 0

  name      = var.name
  subnet_id = values(module.public_subnets.ids)[0]
  tags      = local.common_tags
}
