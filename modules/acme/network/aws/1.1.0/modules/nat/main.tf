variable "name" {
  description = "Name prefix for the NAT gateway and its address."
  type        = string
}

variable "subnet_id" {
  description = "Public subnet that hosts the NAT gateway."
  type        = string
}

variable "tags" {
  description = "Tags for the NAT gateway and its Elastic IP."
  type        = map(string)
  default     = {}
}

resource "aws_eip" "this" {
  domain = "vpc"
  tags   = merge(var.tags, { Name = "${var.name}-nat" })
}

resource "aws_nat_gateway" "this" {
  allocation_id = aws_eip.this.id
  subnet_id     = var.subnet_id
  tags          = merge(var.tags, { Name = "${var.name}-nat" })
}

output "id" {
  description = "ID of the NAT gateway."
  value       = aws_nat_gateway.this.id
}

output "public_ip" {
  description = "Public IPv4 address of the NAT gateway."
  value       = aws_eip.this.public_ip
}
