output "vpc_id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}

output "vpc_cidr_block" {
  description = "CIDR block of the VPC."
  value       = aws_vpc.this.cidr_block
}

output "subnet_ids" {
  description = "IDs of the private subnets, keyed like var.private_subnets."
  value       = module.subnets.ids
}

output "public_subnet_ids_map" {
  description = "IDs of the public subnets, keyed like var.public_subnets."
  value       = module.public_subnets.ids
}

output "nat_gateway_id" {
  description = "ID of the NAT gateway, or null when var.enable_nat_gateway is false."
  value       = one(module.nat[*].id)
}
