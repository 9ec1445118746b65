data "aws_iam_policy_document" "flow_log_assume" {
  count = var.flow_log != null ? 1 : 0

  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["vpc-flow-logs.amazonaws.com"]
    }
  }
}

resource "aws_cloudwatch_log_group" "flow_log" {
  count = var.flow_log != null ? 1 : 0

  name              = "/vpc/${var.name}"
  retention_in_days = coalesce(var.flow_log.retention_in_days, 30)
  tags              = local.common_tags
}

resource "aws_iam_role" "flow_log" {
  count = var.flow_log != null ? 1 : 0

  name_prefix        = "${var.name}-flow-log-"
  assume_role_policy = data.aws_iam_policy_document.flow_log_assume[0].json
  tags               = local.common_tags
}

resource "aws_flow_log" "this" {
  count = var.flow_log != null ? 1 : 0

  vpc_id                   = aws_vpc.this.id
  traffic_type             = var.flow_log.traffic_type
  max_aggregation_interval = var.flow_log.max_aggregation_interval
  log_destination          = aws_cloudwatch_log_group.flow_log[0].arn
  iam_role_arn             = aws_iam_role.flow_log[0].arn
  tags                     = local.common_tags
}
