from .robots import robots_access

KIT_FUNCTIONS = {"robotsAccess": robots_access}
