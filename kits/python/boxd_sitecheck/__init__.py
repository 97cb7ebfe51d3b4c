"""boxd's site checks and review-reply guard, computed locally with results
identical to the box's (pipelines/sitecheck). Standard library only.

KIT_FUNCTIONS maps each kit function name (checkPageJsonLd,
validateSchemaLocally, robotsAccess, llmsTxtCheck, checkLiveMeta,
hasMeaningfulAltText, checkReply, isHealthcareBusiness, generateSchemaMarkup)
to a function of the decoded JSON input that returns plain values and raises
ValueError, saying what to fix, on bad input.
"""

from . import pagecheck, replyguard, robots
from .robots import robots_access

KIT_FUNCTIONS = {}
KIT_FUNCTIONS.update(robots.KIT_FUNCTIONS)
KIT_FUNCTIONS.update(pagecheck.KIT_FUNCTIONS)
KIT_FUNCTIONS.update(replyguard.KIT_FUNCTIONS)

__all__ = ["KIT_FUNCTIONS", "pagecheck", "replyguard", "robots", "robots_access"]
