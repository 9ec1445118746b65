terraform {
  required_version = ">= 1.3"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 6.0"
    }
  }
}

provider "aws" {
  region = var.region
}

variable "region" {
  description = "Region to deploy the example in."
  type        = string
  default     = "eu-west-1"
}

module "network" {
  source = "../../"

  name       = "complete"
  cidr_block = "10.20.0.0/16"
  azs        = ["${var.region}a", "${var.region}b", "${var.region}c"]

  subnets = {
    for i, az in ["a", "b", "c"] : "app-${az}" => {
      cidr = cidrsubnet("10.20.0.0/16", 8, i + 10)
      az   = "${var.region}${az}"
    }
  }

  enable_nat_gateway = true

  default_security_group_ingress = [
    { protocol = "tcp", from_port = 443, to_port = 443, cidr_blocks = ["10.20.0.0/16"] },
  ]

  tags = {
    Environment = "example"
  }
}

module "edge" {
  source = "../../"

  name       = "complete-edge"
  cidr_block = "10.21.0.0/16"
  subnets = {
    edge-a = { cidr = "10.21.0.0/24", tier = "public", tags = { Exposure = "internet" } }
  }
}

output "summary" {
  value = module.network.summary
}

output "public_subnet_ids" {
  value = module.edge.public_subnet_ids
}
