// What the test command's provisioning steps share: telling whether a tool is
// there, and installing Debian packages when this process may (root with
// apt-get), or stopping with the exact command to run.
import { execFileSync } from 'node:child_process';

export const succeeds = (command, args) => {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export const has = (command) => succeeds('sh', ['-c', `command -v ${command}`]);

/**
 * Makes sure `packages` (name -> installed check) are installed: installs the
 * missing ones with apt-get when root, and otherwise exits with `why` and the
 * apt-get line that installs them.
 */
export function requireDebianPackages(packages, why) {
  const missing = () => packages.filter(([, installed]) => !installed()).map(([name]) => name);
  let absent = missing();
  if (absent.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && has('apt-get')) {
    console.log(`Installing Debian's ${absent.join(' ')} (${why})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...absent], { stdio: 'inherit', env });
    absent = missing();
    if (absent.length === 0) return;
  }
  console.error(
    [
      `${why}, and these Debian packages are missing: ${absent.join(' ')}`,
      'Install them, then run `npm test` again:',
      `  sudo apt-get install -y --no-install-recommends ${absent.join(' ')}`,
    ].join('\n'),
  );
  process.exit(1);
}
