data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  kms_key_id = var.create_kms_key ? module.kms[0].key_arn : null
}

resource "aws_s3_bucket" "this" {
  bucket = var.bucket_name
  tags   = var.tags
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket = aws_s3_bucket.this.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = var.versioning ? "Enabled" : "Suspended"
  }
}

module "kms" {
  source  = "terraform-aws-modules/kms/aws"
  version = "~> 2.1"
  count   = var.create_kms_key ? 1 : 0

  description = "Encryption key of s3://${var.bucket_name}"
  aliases     = ["s3/${var.bucket_name}"]
  tags        = var.tags
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.create_kms_key ? "aws:kms" : "AES256"
      kms_master_key_id = local.kms_key_id
    }
    bucket_key_enabled = var.create_kms_key
  }
}

data "aws_iam_policy_document" "this" {
  source_policy_documents = [var.extra_policy_statements]

  statement {
    sid     = "DenyInsecureTransport"
    effect  = "Deny"
    actions = ["s3:*"]
    resources = [
      aws_s3_bucket.this.arn,
      "${aws_s3_bucket.this.arn}/*",
    ]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = data.aws_iam_policy_document.this.json
}

resource "aws_iam_user" "uploader" {
  name = "${var.bucket_name}-uploader"
  path = "/acme/storage/"
  tags = var.tags
}

resource "aws_iam_user_policy" "uploader" {
  name = "put-objects"
  user = aws_iam_user.uploader.name
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["s3:PutObject", "s3:AbortMultipartUpload"]
      Resource = "arn:${data.aws_partition.current.partition}:s3:::${var.bucket_name}/*"
    }]
  })
}

resource "aws_iam_access_key" "uploader" {
  user    = aws_iam_user.uploader.name
  pgp_key = var.uploader_pgp_key
}
