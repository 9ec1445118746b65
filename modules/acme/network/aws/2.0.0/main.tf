locals {
  azs = length(var.azs) > 0 ? var.azs : data.aws_availability_zones.available.names

  subnet_keys = sort(keys(var.subnets))
  subnets = {
    for i, k in local.subnet_keys : k => merge(var.subnets[k], {
      az = coalesce(var.subnets[k].az, local.azs[i % length(local.azs)])
    })
  }

  public_subnets  = { for k, s in local.subnets : k => s if s.tier == "public" }
  private_subnets = { for k, s in local.subnets : k => s if s.tier == "private" }

  # List form of a for expression, filtered.
  public_cidrs = [for s in values(local.public_subnets) : s.cidr if s.cidr != ""]

  common_tags = merge(var.tags, {
    "Module" = "acme/network/aws"
  })

  vpc_description = "%{if var.enable_nat_gateway}NAT-enabled%{else}isolated%{endif} VPC ${var.name} (${length(local.subnets)} subnets)"
}

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_region" "current" {}

resource "aws_vpc" "this" {
  cidr_block           = var.cidr_block
  enable_dns_support   = true
  enable_dns_hostnames = var.enable_dns_hostnames

  tags = merge(local.common_tags, {
    Name        = var.name
    Description = local.vpc_description
  })
}

resource "aws_subnet" "this" {
  for_each = local.subnets

  vpc_id                  = aws_vpc.this.id
  cidr_block              = each.value.cidr
  availability_zone       = each.value.az
  map_public_ip_on_launch = each.value.tier == "public"

  tags = merge(local.common_tags, each.value.tags, {
    Name = "${var.name}-${each.key}"
    Tier = each.value.tier
  })
}

resource "aws_internet_gateway" "this" {
  count = length(local.public_subnets) > 0 ? 1 : 0

  vpc_id = aws_vpc.this.id
  tags   = merge(local.common_tags, { Name = "${var.name}-igw" })
}

resource "aws_route_table" "public" {
  count = length(local.public_subnets) > 0 ? 1 : 0

  vpc_id = aws_vpc.this.id

  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.this[0].id
  }

  tags = merge(local.common_tags, { Name = "${var.name}-public" })
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id

  dynamic "route" {
    for_each = var.enable_nat_gateway ? [module.nat[0].id] : []
    content {
      cidr_block     = "0.0.0.0/0"
      nat_gateway_id = route.value
    }
  }

  tags = merge(local.common_tags, { Name = "${var.name}-private" })
}

resource "aws_route_table_association" "this" {
  for_each = local.subnets

  subnet_id      = aws_subnet.this[each.key].id
  route_table_id = each.value.tier == "public" ? aws_route_table.public[0].id : aws_route_table.private.id
}

resource "aws_default_security_group" "this" {
  vpc_id = aws_vpc.this.id

  dynamic "ingress" {
    for_each = var.default_security_group_ingress
    iterator = rule
    content {
      protocol    = rule.value.protocol
      from_port   = rule.value.from_port
      to_port     = rule.value.to_port
      cidr_blocks = rule.value.cidr_blocks
      self        = rule.value.self
    }
  }

  egress {
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    cidr_blocks = ["0.0.0.0/0"]
  }

  tags = local.common_tags
}

module "nat" {
  source = "./modules/nat"
  count  = var.enable_nat_gateway && length(local.public_subnets) > 0 ? 1 : 0

  name      = var.name
  subnet_id = aws_subnet.this[keys(local.public_subnets)[0]].id
  tags      = local.common_tags
}
