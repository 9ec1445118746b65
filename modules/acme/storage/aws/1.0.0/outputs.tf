output "bucket_id" {
  description = "Name of the bucket."
  value       = aws_s3_bucket.this.id
}

output "bucket_arn" {
  description = "ARN of the bucket."
  value       = aws_s3_bucket.this.arn
}

output "kms_key_arn" {
  description = "ARN of the KMS key encrypting the bucket, or null when SSE-S3 is used."
  value       = local.kms_key_id
}

output "uploader_access_key_id" {
  description = "Access key ID of the uploader IAM user."
  value       = aws_iam_access_key.uploader.id
}

output "uploader_secret_access_key" {
  description = <<-EOT
    Secret access key of the uploader IAM user. When var.uploader_pgp_key is
    set this is null; read `uploader_encrypted_secret` instead.
  EOT
  value       = var.uploader_pgp_key == null ? aws_iam_access_key.uploader.secret : null
  sensitive   = true
}

output "uploader_encrypted_secret" {
  description = "PGP-encrypted secret access key, when var.uploader_pgp_key is set."
  value       = aws_iam_access_key.uploader.encrypted_secret
}

output "replica_bucket_arn" {
  description = "ARN of the replica bucket, or null without replication."
  value       = one(aws_s3_bucket.replica[*].arn)
}
