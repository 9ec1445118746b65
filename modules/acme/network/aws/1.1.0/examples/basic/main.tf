provider "aws" {
  region = "eu-west-1"
}

module "network" {
  source = "../../"

  name       = "basic"
  cidr_block = "10.10.0.0/16"
  azs        = ["eu-west-1a", "eu-west-1b"]

  public_subnets = {
    edge-a = { cidr = "10.10.0.0/24", az_idx = 0 }
  }

  private_subnets = {
    app-a = { cidr = "10.10.1.0/24", az_idx = 0 }
    app-b = { cidr = "10.10.2.0/24", az_idx = 1 }
  }

  enable_nat_gateway = true
}

output "vpc_id" {
  value = module.network.vpc_id
}
