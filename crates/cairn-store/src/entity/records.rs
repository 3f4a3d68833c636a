use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "records")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub id: String,
    pub rev: i64,
    pub framework: String,
    pub session_id: String,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub outcome: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub captured_at: String,
    pub request: String,
    pub author: Option<String>,
    pub text: String,
    pub content: String,
    pub source: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
