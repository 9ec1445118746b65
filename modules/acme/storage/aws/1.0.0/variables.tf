variable "bucket_name" {
  description = "Globally unique name of the bucket."
  type        = string
}

variable "versioning" {
  description = "Keep every version of every object."
  type        = bool
  default     = true
}

variable "create_kms_key" {
  description = <<EOF
Create a dedicated KMS key for server-side encryption.
When false, objects are encrypted with the AWS managed key (SSE-S3).
EOF
  type        = bool
  default     = false
}

variable "replication" {
  description = "Replicate objects to a bucket in the region of the `aws.replica` provider. Null disables replication."
  type = object({
    bucket_name   = string
    storage_class = optional(string, "STANDARD_IA")
    prefixes      = optional(list(string), [""])
  })
  default = null
}

variable "extra_policy_statements" {
  description = "Bucket policy (JSON) whose statements are added to the generated policy, which already denies insecure transport."
  type        = string
  default     = <<-EOT
    {
      "Version": "2012-10-17",
      "Statement": []
    }
  EOT
}

variable "uploader_pgp_key" {
  description = "Base64 PGP public key, or `keybase:<user>`, used to encrypt the uploader's secret access key."
  type        = string
  sensitive   = true
  default     = null
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
