import { chromium, type Browser } from 'playwright-core';
import { missingProgram } from './required-programs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why Chromium tests cannot run here (for `describeNeeding`), or undefined when they can. */
export const CHROMIUM_MISSING = missingProgram(
  CHROMIUM,
  'apt-get install -y --no-install-recommends chromium (bash .ci/run installs it when missing), or set CHROMIUM_PATH',
  'Chromium',
);

/** As the machine's notes say: without these, Chromium tries the network at every start. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Headless Chromium as the browser tests drive it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
