use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "vectors")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub owner_id: String,
    pub kind: String,
    pub ord: i64,
    pub model: String,
    pub dim: i64,
    pub data: Vec<u8>,
    pub created_at: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
