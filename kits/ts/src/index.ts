export * from "./robots.js";
import { robotsAccess } from "./robots.js";
export const kitFunctions = { robotsAccess };
