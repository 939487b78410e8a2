"""The aiohttp front end: manifest, downloads, public pages, operator dashboard."""
