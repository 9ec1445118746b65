provider "aws" {
  region = "eu-west-1"
}

provider "aws" {
  alias  = "replica"
  region = "eu-central-1"
}

module "storage" {
  source = "../../"

  providers = {
    aws         = aws
    aws.replica = aws.replica
  }

  bucket_name    = "acme-example-artifacts"
  create_kms_key = true

  replication = {
    bucket_name = "acme-example-artifacts-replica"
    prefixes    = ["releases/", "nightly/"]
  }

  noncurrent_version_expiration_days = 30

  tags = {
    Environment = "example"
  }
}

output "bucket_arn" {
  value = module.storage.bucket_arn
}

output "uploader_secret_access_key" {
  value     = module.storage.uploader_secret_access_key
  sensitive = true
}
