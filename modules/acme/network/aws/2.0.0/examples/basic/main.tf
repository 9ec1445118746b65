provider "aws" {
  region = "eu-west-1"
}

module "network" {
  source = "../../"

  name       = "basic"
  cidr_block = "10.10.0.0/16"

  subnets = {
    app-a = { cidr = "10.10.1.0/24" }
    app-b = { cidr = "10.10.2.0/24" }
  }
}

output "private_subnet_ids" {
  value = module.network.private_subnet_ids
}
