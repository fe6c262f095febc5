// candor's reporter for node's test runner (written to a scratch folder and passed as
// `--test-reporter=PATH`): writes jest's JSON report to its destination, one entry per
// test file, each test with its describe path as a list, which node's junit reporter
// loses along with the file. Suites, and tests whose subtests reported, are containers,
// not tests, unless they failed on their own. A test file whose process failed (a syntax
// error, a missing module, a crash) carries `testExecError`: it could not run. A test left
// out by `--test-name-pattern` is `filtered`, so that a one-test run does not read it as
// skipped.
const FILTERED = 'test name does not match pattern';

function message(error) {
  if (!error) {
    return '';
  }
  const cause = error.cause !== undefined && error.cause !== null ? error.cause : error;
  if (cause && typeof cause.stack === 'string') {
    return cause.stack;
  }
  return String(cause);
}

export default async function* candorReporter(source) {
  const files = new Map();
  const fileOf = (name) => {
    if (!files.has(name)) {
      files.set(name, { name, assertionResults: [], stack: [], children: [], stderr: [] });
    }
    return files.get(name);
  };
  for await (const event of source) {
    const data = event.data || {};
    if (event.type === 'test:stderr' && data.file) {
      fileOf(data.file).stderr.push(String(data.message));
      continue;
    }
    if (!data.file || typeof data.nesting !== 'number') {
      continue;
    }
    const file = fileOf(data.file);
    if (event.type === 'test:start') {
      file.stack.length = data.nesting;
      file.children.length = data.nesting;
      file.stack.push(data.name);
      file.children.push(false);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') {
      continue;
    }
    const details = data.details || {};
    const failed = event.type === 'test:fail';
    if (data.nesting === 0 && data.name === data.file) {
      // The file's own process.
      if (failed) {
        file.testExecError = message(details.error) || 'the test file failed';
        // The error's own line first (`SyntaxError: …`, `Error: Cannot find module …`):
        // node prints the source location above it.
        const lines = file.stderr.join('').split('\n');
        const first = lines.find((line) => /^[A-Za-z]*Error\b/.test(line));
        file.message = [first, ...lines].filter((l) => l !== undefined).join('\n').trim() ||
          file.testExecError;
      }
      continue;
    }
    for (let level = 0; level < data.nesting && level < file.children.length; level += 1) {
      file.children[level] = true;
    }
    const container = details.type === 'suite' || file.children[data.nesting] === true;
    const failureType = details.error && details.error.failureType;
    if (container && !(failed && failureType !== 'subtestsFailed')) {
      process.stdout.write(`${failed ? 'failed' : 'passed'} ${data.name} (suite)\n`);
      continue;
    }
    const titles = file.stack.slice(0, data.nesting);
    let status = failed ? 'failed' : 'passed';
    if (data.skip === FILTERED) {
      status = 'filtered';
    } else if (data.skip !== undefined && data.skip !== false) {
      status = 'pending';
    } else if (data.todo !== undefined && data.todo !== false) {
      status = 'todo';
    }
    const failure = failed ? message(details.error) : '';
    file.assertionResults.push({
      ancestorTitles: titles,
      title: data.name,
      fullName: [...titles, data.name].join(' '),
      status,
      duration: typeof details.duration_ms === 'number' ? details.duration_ms : null,
      failureMessages: failed ? [failure] : [],
      location: typeof data.line === 'number' ? { line: data.line, column: data.column } : null,
    });
    process.stdout.write(`${status} ${[...titles, data.name].join(' > ')}\n`);
    if (failed) {
      process.stdout.write(`${failure}\n`);
    }
  }
  const testResults = [];
  let numTotalTests = 0;
  for (const file of files.values()) {
    numTotalTests += file.assertionResults.length;
    const entry = { name: file.name, assertionResults: file.assertionResults };
    if (file.testExecError !== undefined) {
      entry.status = 'failed';
      entry.message = file.message;
      entry.testExecError = { message: file.testExecError };
    }
    testResults.push(entry);
  }
  // `numTotalTests` first: it and `testResults` are what tell jest's JSON apart.
  yield JSON.stringify({ numTotalTests, producer: 'node', testResults });
}
