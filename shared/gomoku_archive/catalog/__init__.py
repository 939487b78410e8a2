"""What is published, as documents: the manifest, the bulk lists, the feed, torrents, freshness."""
