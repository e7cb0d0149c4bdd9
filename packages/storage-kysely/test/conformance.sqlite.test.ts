// The storage conformance kit against SQLite: a fresh temp file per check.
import { runStoreConformance } from '@inbox-kit/core/testing';
import { sqliteSubject } from './helpers.js';

runStoreConformance('sqlite store', sqliteSubject);
