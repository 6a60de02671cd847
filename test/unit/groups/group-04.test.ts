import { runTestGroup } from '../../support/test-group';

runTestGroup(__filename);
