// Runs in every test file of the Redis project: TestServer then stores jobs in Redis.
process.env['OJS_TEST_BACKEND'] = 'redis';
