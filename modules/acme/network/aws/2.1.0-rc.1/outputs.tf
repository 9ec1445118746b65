output "vpc_id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}

output "vpc_cidr_block" {
  description = "CIDR block of the VPC."
  value       = aws_vpc.this.cidr_block
}

output "private_subnet_ids" {
  description = "IDs of the private subnets, keyed like var.subnets. Was `subnet_ids` before 2.0.0."
  value       = { for k, s in aws_subnet.this : k => s.id if local.subnets[k].tier == "private" }
}

output "public_subnet_ids" {
  description = "IDs of the public subnets, keyed like var.subnets."
  value       = { for k, s in aws_subnet.this : k => s.id if local.subnets[k].tier == "public" }
}

output "public_cidr_blocks" {
  description = "CIDR blocks of the public subnets, in key order."
  value       = local.public_cidrs
}

output "nat_gateway_id" {
  description = "ID of the NAT gateway, or null when there is none."
  value       = one(module.nat[*].id)
}

output "summary" {
  description = "One line describing the network, for logs and dashboards."
  value       = "${local.vpc_description} in ${data.aws_region.current.name}"
}

output "flow_log_group_name" {
  description = "Name of the CloudWatch log group receiving flow logs, or null when they are disabled."
  value       = one(aws_cloudwatch_log_group.flow_log[*].name)
}
