"""EC2: instances of one account and region, tagged per owner, on boto3."""
