# Acme's DNS policy lowers the TTL of every record managed through this module.
# Terraform merges this block into variable "default_ttl" in variables.tf:
# only the default changes, the description and type stay.
variable "default_ttl" {
  default = 60
}
