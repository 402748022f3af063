export { isRobotsTxtUrl, type RobotsTxtOptions, robotsTxt } from './robots-format.js';
export {
  compilePattern,
  normaliseRobotsPath,
  productToken,
  type RobotsRule,
  RobotsRuleSet,
} from './rules.js';
