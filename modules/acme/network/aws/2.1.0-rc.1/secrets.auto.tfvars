# Local development values only; excluded by .terraformignore.
name = "dev-network"
