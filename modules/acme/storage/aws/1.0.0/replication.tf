resource "aws_s3_bucket" "replica" {
  count    = var.replication != null ? 1 : 0
  provider = aws.replica

  bucket = var.replication.bucket_name
  tags   = var.tags
}

resource "aws_s3_bucket_versioning" "replica" {
  count    = var.replication != null ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id

  versioning_configuration {
    status = "Enabled"
  }
}

data "aws_iam_policy_document" "replication_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "replication" {
  count = var.replication != null ? 1 : 0

  name_prefix        = "s3-replication-"
  assume_role_policy = data.aws_iam_policy_document.replication_assume.json
  tags               = var.tags
}

resource "aws_s3_bucket_replication_configuration" "this" {
  count      = var.replication != null ? 1 : 0
  depends_on = [aws_s3_bucket_versioning.this]

  bucket = aws_s3_bucket.this.id
  role   = aws_iam_role.replication[0].arn

  dynamic "rule" {
    for_each = { for i, p in var.replication.prefixes : tostring(i) => p }
    content {
      id       = "replicate-${rule.key}"
      status   = "Enabled"
      priority = tonumber(rule.key)

      filter {
        prefix = rule.value
      }

      delete_marker_replication {
        status = "Enabled"
      }

      destination {
        bucket        = aws_s3_bucket.replica[0].arn
        storage_class = var.replication.storage_class
      }
    }
  }
}
